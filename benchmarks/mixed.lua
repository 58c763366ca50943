-- wrk script for the memory row: a mix of MCP messages and REST requests, cycled in order
-- for as long as wrk runs (-d). It never stops a thread early: a stopped thread keeps its
-- connections open, and a sync worker that accepted one would wait on it.
local paths = {}
local bodies = {}
local index = 0

function init(args)
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
