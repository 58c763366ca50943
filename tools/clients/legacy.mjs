// The TypeScript SDK 1.x client (handshake era only): connect to an MCP endpoint with an
// API key, list the tools, call one, and print what happened as one JSON line.
//
//   node legacy.mjs <url> <tool> [<arguments as JSON>]   (the key in MCP_API_KEY)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, rawArguments = "{}"] = process.argv.slice(2);
const headers = process.env.MCP_API_KEY ? { Authorization: `Bearer ${process.env.MCP_API_KEY}` } : {};

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "mcp-endpoint-tests-ts1", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(rawArguments) });
console.log(
  JSON.stringify({
    protocolVersion: transport.protocolVersion,
    sessionId: transport.sessionId ?? null,
    server: client.getServerVersion(),
    tools: tools.tools.map((t) => t.name),
    result,
  }),
);
await client.close();
