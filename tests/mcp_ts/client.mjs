// The TypeScript SDK's MCP client against agentdocs' /mcp/, as Inspector and other
// TypeScript clients use it: connect, list the tools, make the calls named on the
// command line, print one JSON object of what the client saw (a thrown error is
// recorded as what a user would see, not a crash).
//
//   node client.mjs URL TOKEN '[["read_document", {"path": "guide.md"}], ...]'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson ?? "[]");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "agentdocs-ts-test", version: "1.0.0" });
const seen = { calls: [] };

try {
  await client.connect(transport);
  seen.protocolVersion = transport.protocolVersion ?? null;
  seen.serverInfo = client.getServerVersion() ?? null;
  seen.instructions = client.getInstructions() ?? null;
  const { tools } = await client.listTools();
  seen.tools = tools.map((tool) => ({
    name: tool.name,
    title: tool.title ?? null,
    annotations: tool.annotations ?? null,
    hasOutputSchema: Boolean(tool.outputSchema),
  }));
  for (const [name, args] of calls) {
    try {
      // callTool validates structuredContent against the tool's outputSchema.
      const result = await client.callTool({ name, arguments: args });
      seen.calls.push({ name, result });
    } catch (error) {
      seen.calls.push({ name, thrown: String(error?.message ?? error) });
    }
  }
} catch (error) {
  seen.connectError = String(error?.message ?? error);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(seen) + "\n");
