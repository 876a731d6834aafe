// workmem inside the OpenAI Agents SDK for TypeScript (`workmem/agents`): `workmemAgents` gives a
// `callModelInputFilter` that bounds every model call of a run through a workmem session (what
// the run gained logged, the safety net's compactions, the memory and `context_meta` in the
// engine's order) and workmem's own tools as the SDK's function tools.
//
//   const memory = workmemAgents({ session: await Session.create(root), window: 128_000 });
//   const agent = new Agent({ name: 'coder', instructions: '...', tools: [readFile, ...memory.tools] });
//   await run(agent, task, { callModelInputFilter: memory.callModelInputFilter, maxTurns: 100 });
//
// The run's items are the session's messages by their place in the run's input (which the SDK
// only appends to), so a run continued from `result.history`, or a new filter on the same
// session after a restart, logs only what is new. An assistant's turn (its reasoning, its text,
// its function calls) is one message; each item is kept as it came and sent back as it came
// while no compaction replaced its message.
import { tool } from '@openai/agents';
import { Bound } from './bound.js';
import { recordMessage } from './session.js';

const text = (content) => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content?.type === 'text' ? content.text : '';
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
};

/** The run's items as `[key, message, items]`: an assistant's turn (reasoning, text, calls) one message, each output one. */
function messages(items) {
  const out = [];
  let turn = null;
  items.forEach((item, at) => {
    const kind = item.type ?? 'message';
    if (kind === 'reasoning' || kind === 'function_call' || (kind === 'message' && item.role === 'assistant')) {
      turn ??= [`agents:${at}`, { role: 'assistant', content: '', toolCalls: [] }, []];
      turn[2].push(item);
      if (kind === 'function_call') turn[1].toolCalls.push({ id: item.callId, name: item.name, arguments: item.arguments || '{}' });
      else if (kind === 'message') turn[1].content += text(item.content);
      return;
    }
    if (turn) out.push(turn);
    turn = null;
    if (kind === 'function_call_result') {
      out.push([`agents:${at}`, { role: 'tool', content: text(item.output), toolCallId: item.callId, toolCalls: [] }, [item]]);
    } else if (kind === 'message') {
      out.push([`agents:${at}`, { role: item.role === 'system' ? 'system' : 'user', content: text(item.content), toolCalls: [] }, [item]]);
    } else {
      // An item workmem does not know (a hosted tool's call, an image): kept as it came, read
      // as a note of its kind.
      out.push([`agents:${at}`, { role: 'user', content: `[${kind}]`, toolCalls: [] }, [item]]);
    }
  });
  if (turn) out.push(turn);
  return out;
}

/** A message the engine wrote (a placeholder, the memory, `context_meta`) as input items. */
function items(m, toolNames) {
  if (m.role === 'assistant') {
    const out = m.content ? [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: m.content }] }] : [];
    for (const c of m.toolCalls) out.push({ type: 'function_call', callId: c.id, name: c.name, arguments: c.arguments, status: 'completed' });
    return out;
  }
  if (m.role === 'tool') {
    return [{ type: 'function_call_result', callId: m.toolCallId ?? '', name: toolNames.get(m.toolCallId) ?? 'tool', status: 'completed', output: { type: 'text', text: m.content } }];
  }
  return [{ type: 'message', role: m.role === 'system' ? 'system' : 'user', content: m.content }];
}

const same = (a, b) => a.role === b.role && a.content === b.content && (a.toolCallId ?? '') === (b.toolCallId ?? '')
  && a.toolCalls.length === b.toolCalls.length && a.toolCalls.every((c, i) => c.id === b.toolCalls[i].id && c.arguments === b.toolCalls[i].arguments);

/**
 * `{ callModelInputFilter, tools }` (see the module). `session` is a `workmem/session` Session;
 * the options are the safety net's (`window`, `compactAt`, `compactGoal`, `keepRecent`,
 * `remindAfterRounds`) and `count`. The filter throws WorkmemError for a request that no
 * compaction brings under the window, rather than sending it.
 */
export function workmemAgents({ session, ...options }) {
  const bound = new Bound(session, options);
  const tools = bound.tools().map((t) => tool({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    // Not strict: `read_history`'s `from` is optional.
    strict: false,
    execute: async (input) => bound.answer(t.name, typeof input === 'object' && input !== null ? input : {}),
  }));

  async function callModelInputFilter({ modelData, agent }) {
    const input = [...modelData.input];
    await bound.log(messages(input));
    const offered = [];
    for (const t of agent.tools ?? []) {
      if (t.type === 'function') offered.push({ name: t.name, description: t.description, parameters: t.parameters });
    }
    const request = await bound.request(modelData.instructions ?? '', await bound.toolsTokens(offered.length ? JSON.stringify(offered) : ''));
    const kept = new Map();
    for (const r of await session.records()) {
      const extra = (r.opaque ?? []).filter((o) => !(o && typeof o === 'object' && 'key' in o));
      if (r.kind === 'message' && extra.length) kept.set(r.seq, { message: recordMessage(r), items: extra });
    }
    const toolNames = new Map();
    for (const item of input) if (item.type === 'function_call') toolNames.set(item.callId, item.name);
    const out = [];
    for (const [seq, m] of request.messages) {
      const original = seq === null ? undefined : kept.get(seq);
      if (original && same(original.message, m)) out.push(...original.items);
      else out.push(...items(m, toolNames));
    }
    return { input: out, instructions: request.system };
  }

  return { callModelInputFilter, tools };
}
