// Baseline of the start-up benchmark: a bare Node script that answers ACP `initialize` from its
// first line, with an answer of the same shape and size as zcode-acp's. No imports, no SDK, no
// validation: what "Node alone" costs from spawn to an initialize answer on this machine.
const RESULT = {
  protocolVersion: 1,
  agentCapabilities: {
    loadSession: true,
    promptCapabilities: { image: true, audio: true, embeddedContext: true },
    mcpCapabilities: { http: true, sse: true },
    sessionCapabilities: { list: {}, resume: {}, close: {} },
  },
  authMethods: [
    {
      id: "zcode-app",
      name: "Sign in with the ZCode app",
      description: "zcode-acp uses the ZCode desktop app's own sign-in. Sign in inside the ZCode app, then retry.",
    },
  ],
  agentInfo: { name: "zcode-acp", title: "ZCode", version: "0.0.0" },
};

let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    const message = JSON.parse(line);
    if (message.method === "initialize") process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: RESULT })}\n`);
  }
});
