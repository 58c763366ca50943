-- wrk script for the memory row: a mix of MCP messages and REST requests, cycled in order,
-- and each thread stops after its share of WRK_REQUESTS answers.
local paths = {}
local bodies = {}
local index = 0
local done = 0
local limit = 0

function init(args)
  local total = tonumber(os.getenv("WRK_REQUESTS") or "100000")
  local threads = tonumber(os.getenv("WRK_THREADS") or "1")
  limit = math.ceil(total / threads)
  local mix = os.getenv("WRK_MIX")
  -- WRK_MIX: lines of "PATH<TAB>BODY"; an empty body means a GET.
  for line in string.gmatch(mix, "[^\n]+") do
    local path, body = string.match(line, "^([^\t]*)\t?(.*)$")
    table.insert(paths, path)
    table.insert(bodies, body)
  end
end

function request()
  index = index % #paths + 1
  local body = bodies[index]
  if body == "" then
    return wrk.format("GET", paths[index])
  end
  -- A header table replaces wrk.headers, which holds the -H values (the API key): copy them.
  local headers = {}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Content-Type"] = "application/json"
  return wrk.format("POST", paths[index], headers, body)
end

function response(status, headers, body)
  done = done + 1
  if done >= limit then
    wrk.thread:stop()
  end
end
