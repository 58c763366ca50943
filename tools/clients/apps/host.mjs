// A minimal MCP Apps host for the browser tests: the official apps SDK's AppBridge, the
// View in an iframe, and tool calls handed to the test (window.mcpCallTool), which sends
// them to the server with a real MCP client. Bundled by tests/test_ui_browser.py.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.startHost = async function startHost({ html, tool, toolArguments, toolResult }) {
  const iframe = document.getElementById("view");
  const bridge = new AppBridge(
    null,
    { name: "mcp-endpoint-tests-host", version: "1.0.0" },
    { serverTools: {}, logging: {} },
    { hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline" } },
  );
  bridge.oncalltool = async (params) => window.mcpCallTool(params.name, params.arguments ?? {});
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  iframe.srcdoc = html;
  await new Promise((resolve) => iframe.addEventListener("load", resolve, { once: true }));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await initialized;
  await bridge.sendToolInput({ arguments: toolArguments });
  await bridge.sendToolResult(toolResult);
  window.hostReady = true;
};
