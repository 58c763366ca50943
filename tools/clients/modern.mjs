// The TypeScript SDK v2 client (@modelcontextprotocol/client) with version negotiation:
// connect to an MCP endpoint with an API key, list the tools, call one, and print what
// happened as one JSON line. With MCP_CONFIRM=accept|decline the client declares
// elicitation and answers a confirmation question with that, whichever era it speaks.
//
//   node modern.mjs <url> <tool> [<arguments as JSON>] [auto|legacy]   (the key in MCP_API_KEY)
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, tool, rawArguments = "{}", mode = "auto"] = process.argv.slice(2);
const headers = process.env.MCP_API_KEY ? { Authorization: `Bearer ${process.env.MCP_API_KEY}` } : {};
const confirm = process.env.MCP_CONFIRM;

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client(
  { name: "mcp-endpoint-tests-ts2", version: "1.0.0" },
  { capabilities: confirm ? { elicitation: {} } : {}, versionNegotiation: { mode } },
);
const asked = [];
if (confirm) {
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params.message);
    return confirm === "accept"
      ? { action: "accept", content: { confirm: true } }
      : { action: "decline" };
  });
}
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(rawArguments) });
console.log(
  JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion(),
    era: client.getProtocolEra(),
    server: client.getServerVersion(),
    tools: tools.tools.map((t) => t.name),
    asked,
    result,
  }),
);
await client.close();
