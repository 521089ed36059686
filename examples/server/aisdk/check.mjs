// Drives a Parley server with the real AI SDK client: the Chat class of
// @ai-sdk/react, its DefaultChatTransport, and the SDK's own
// sendAutomaticallyWhen helpers, exactly as a useChat page would, without
// rendering. Run by ../aisdk_test.go:
//
//	node check.mjs <base URL> <scenario> [user]
//
// Scenarios: plain, tool, approve, deny, client, regenerate, reasoning, error. It
// prints {status, error, finishReasons, requests, messages, stored} as
// JSON, stored being GET /api/chat/ui/{id} afterwards (what a reload
// shows): the Go test asserts on it.
import { Chat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';

const [base, scenario, user = 'alice'] = process.argv.slice(2);
const text = {
  plain: 'hello',
  tool: 'show my notes',
  approve: 'add a note: buy bread',
  deny: 'add a note: buy milk',
  client: 'what time is it in my browser',
  regenerate: 'hello',
  error: 'hello',
  reasoning: 'think about pandas',
}[scenario];
if (!base || !text) {
  console.error('usage: node check.mjs <base URL> <plain|tool|approve|deny|client|regenerate|reasoning|error> [user]');
  process.exit(2);
}

const requests = [];
const finishReasons = [];
const answered = new Set();

const chat = new Chat({
  transport: new DefaultChatTransport({
    api: base + '/api/chat/ui',
    headers: { 'X-Demo-User': user },
    body: { page: 'notes' },
    fetch: async (url, init) => {
      requests.push({ method: init?.method ?? 'GET', body: init?.body ? JSON.parse(init.body) : undefined });
      return fetch(url, init);
    },
  }),
  sendAutomaticallyWhen: ({ messages }) =>
    lastAssistantMessageIsCompleteWithApprovalResponses({ messages }) ||
    lastAssistantMessageIsCompleteWithToolCalls({ messages }),
  onFinish: ({ finishReason }) => {
    finishReasons.push(finishReason ?? null);
    queueMicrotask(answer);
  },
});

// answer does what a page would with the last answer: decide its approval
// cards and run its client-side tools.
function answer() {
  const last = chat.lastMessage;
  if (last?.role !== 'assistant') return;
  for (const p of last.parts) {
    if (!p.type.startsWith('tool-')) continue;
    if (p.state === 'approval-requested' && !answered.has(p.approval.id)) {
      answered.add(p.approval.id);
      void chat.addToolApprovalResponse(scenario === 'approve'
        ? { id: p.approval.id, approved: true }
        : { id: p.approval.id, approved: false, reason: 'Not that note.' });
    } else if (p.state === 'input-available' && p.type === 'tool-browser_time' && !answered.has(p.toolCallId)) {
      answered.add(p.toolCallId);
      void chat.addToolOutput({
        tool: 'browser_time', toolCallId: p.toolCallId,
        output: { iso: '2026-11-24T10:00:00.000Z', local: 'Tuesday 10:00', time_zone: 'Europe/Berlin' },
      });
    }
  }
}

// idle resolves once the chat has stayed ready or errored for quietMs:
// follow-ups that addToolApprovalResponse and addToolOutput start are not
// awaited by sendMessage.
function idle(quietMs = 400) {
  return new Promise(resolve => {
    let timer;
    const check = () => {
      clearTimeout(timer);
      if (chat.status === 'ready' || chat.status === 'error') {
        timer = setTimeout(() => {
          if (chat.status === 'ready' || chat.status === 'error') { unsub(); resolve(); } else check();
        }, quietMs);
      }
    };
    const unsub = chat['~registerStatusCallback'](check);
    check();
  });
}

const deadline = setTimeout(() => {
  console.error('check.mjs: no result after 30 s; status ' + chat.status);
  process.exit(3);
}, 30_000);

await chat.sendMessage({ text });
await idle();
if (scenario === 'regenerate') {
  await chat.regenerate();
  await idle();
}
clearTimeout(deadline);

// What a page gets back after a reload: the stored thread as UI messages.
const stored = scenario === 'error' ? undefined : await (await fetch(
  base + '/api/chat/ui/' + encodeURIComponent(chat.id), { headers: { 'X-Demo-User': user } })).json();

console.log(JSON.stringify({
  chatId: chat.id,
  status: chat.status,
  error: chat.error ? String(chat.error.message ?? chat.error) : undefined,
  finishReasons,
  requests,
  messages: chat.messages,
  stored: stored?.messages,
}));
