// A thin client on the official TypeScript SDK: it connects to the server
// the plan names, lists the tools, makes the plan's calls in order and
// prints what it got as one JSON object. The Go test (TestMCP/npm_client)
// holds the assertions. The SDK's client checks each structured answer
// against the tool's output schema itself, and throws when one does not
// conform.
//
// Usage: node client.mjs PLAN.json
//   {"command": [...argv] | "url": "http://.../mcp", "calls": [{"name", "arguments"}]}
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({ command: plan.command[0], args: plan.command.slice(1), stderr: "inherit" });
const client = new Client({ name: "npm-sdk-test", version: "1" });
await client.connect(transport);
const out = { server: client.getServerVersion(), tools: (await client.listTools()).tools, calls: [] };
for (const c of plan.calls) {
  try {
    const res = await client.callTool({ name: c.name, arguments: c.arguments });
    out.calls.push({ name: c.name, isError: !!res.isError, text: res.content.map((x) => x.text ?? "").join(""), structuredContent: res.structuredContent ?? null });
  } catch (e) {
    out.calls.push({ name: c.name, thrown: String(e) });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
