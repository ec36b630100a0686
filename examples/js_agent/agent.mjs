// A small retail agent written in JavaScript, served over HTTP for passhat to replay.
//
// passhat POSTs each turn as {trial_id, domain, task_type, policy, conversation, mcp_url, mcp_token} and
// takes back {text, final}. The agent calls the trial's own tools over MCP (streamable HTTP, bearer token of
// that trial), so every call is recorded and graded. It handles pending-order cancellations, procedurally:
// verify the customer by email, read the order, ask for a yes, cancel. Anything else it hands to a human.
//
//   node agent.mjs [--port 8787]     prints "listening on http://127.0.0.1:PORT/turn" once ready

import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const ORDER = /#W\d+/;
const REASON = /(no longer needed|ordered by mistake)/i;
const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/;
const CONFIRM = "Shall I proceed?";

// One MCP connection for the length of the turn: the trial's tool server keeps what was verified.
async function withTools(request, work) {
  const transport = new StreamableHTTPClientTransport(new URL(request.mcp_url), {
    requestInit: { headers: { Authorization: `Bearer ${request.mcp_token}` } },
  });
  const client = new Client({ name: "passhat-js-agent", version: "0.1.0" });
  await client.connect(transport);
  try {
    return await work(async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      const text = (result.content ?? []).map((block) => block.text ?? "").join("");
      return { ok: !result.isError, data: result.isError ? null : JSON.parse(text || "null"), text };
    });
  } finally {
    await client.close();
  }
}

async function cancellation(request) {
  const turns = request.conversation;
  const said = turns.filter((m) => m.role === "customer").map((m) => m.text).join("\n");
  const order = said.match(ORDER)?.[0];
  const reason = said.match(REASON)?.[1]?.toLowerCase();
  const email = said.match(EMAIL)?.[0];
  if (!order || !reason) {
    return { text: "Which order would you like to cancel, and why: no longer needed or ordered by mistake?", final: false };
  }
  if (!email) {
    return { text: "Happy to help. What is the email address on your account?", final: false };
  }
  const asked = turns.length >= 2 && turns[turns.length - 2].text.endsWith(CONFIRM);
  const agreed = asked && /\byes\b/i.test(turns[turns.length - 1].text);
  return withTools(request, async (call) => {
    const customer = await call("find_customer_by_email", { email });
    if (!customer.ok) {
      return { text: "I'm sorry, I could not find an account with that email, so I cannot cancel the order.", final: true };
    }
    if (!agreed) {
      const found = await call("get_order", { order_id: order });
      if (!found.ok || found.data.customer_id !== customer.data.customer_id) {
        return { text: `I'm sorry, I could not find order ${order} on your account.`, final: true };
      }
      if (found.data.status !== "pending") {
        return { text: `Order ${order} is ${found.data.status}, so it can no longer be cancelled.`, final: true };
      }
      return { text: `Order ${order} is pending. I will cancel it (${reason}) and refund it. ${CONFIRM}`, final: false };
    }
    const cancelled = await call("cancel_pending_order", { order_id: order, reason });
    if (!cancelled.ok) {
      return { text: `I'm sorry, I could not cancel order ${order}: ${cancelled.text}`, final: true };
    }
    return { text: `Done: order ${order} is cancelled and ${cancelled.data.refunded} is refunded.`, final: true };
  });
}

async function respond(request) {
  if (request.task_type === "cancel_pending_order") {
    return cancellation(request);
  }
  return { text: "I'm sorry, I can only help with cancelling pending orders; let me pass you to a colleague.", final: true };
}

function readJson(incoming) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    incoming.on("data", (chunk) => chunks.push(chunk));
    incoming.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
    incoming.on("error", reject);
  });
}

function answer(outgoing, status, body) {
  const data = JSON.stringify(body);
  outgoing.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  outgoing.end(data);
}

const server = http.createServer(async (incoming, outgoing) => {
  if (incoming.method !== "POST" || incoming.url !== "/turn") {
    answer(outgoing, 404, { error: "POST the turn to /turn" });
    return;
  }
  let request;
  try {
    request = await readJson(incoming);
  } catch {
    answer(outgoing, 400, { error: "the body must be JSON" });
    return;
  }
  try {
    answer(outgoing, 200, await respond(request));
  } catch (error) {
    answer(outgoing, 500, { error: String(error) });
  }
});

const flag = process.argv.indexOf("--port");
const port = flag >= 0 ? Number(process.argv[flag + 1]) : 8787;
server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/turn`);
});
