// workmem inside the Vercel AI SDK (`workmem/ai-sdk`): a language model middleware for
// `wrapLanguageModel`. `transformParams` logs what the prompt gained to a workmem session and
// sends the bounded view (the fallback's compactions, the memory and `context_meta` in the
// engine's order) with workmem's own tools added; `wrapGenerate` and `wrapStream` answer the
// model's calls of those tools and ask again, so the application never sees them (as
// `workmem proxy` does). The application's messages are never changed: only what is sent.
//
//   const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: workmemMiddleware({ session, window: 128_000 }) });
//
// A prompt's messages are keyed by their place in it and their content, so a prompt that grows
// step by step (or a session resumed after a restart) logs only what is new. A tool message's
// results are a message each; every message is sent back as it came while no compaction
// replaced it (reasoning parts and provider options included).
import { createHash, randomUUID } from 'node:crypto';
import { Bound } from './bound.js';
import { WorkmemError } from './index.js';
import { recordMessage } from './session.js';

/** Rounds of workmem's own tool calls answered before the answer goes to the application as it is. */
const MAX_OWN_ROUNDS = 8;

const text = (parts) => (typeof parts === 'string' ? parts : parts.filter((p) => p.type === 'text').map((p) => p.text).join(''));

/** A tool result's output as text: what the model reads of it. */
function outputText(output) {
  switch (output?.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return `execution denied${output.reason ? `: ${output.reason}` : ''}`;
    case 'content':
      return output.value.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('');
    default:
      return JSON.stringify(output ?? null);
  }
}

/** JSON text parsed; undefined where it is not JSON. */
function parsed(text) {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return undefined;
  }
}

/** A result part's provider metadata as a prompt part's provider options. */
const carried = (p) => (p.providerMetadata ? { providerOptions: p.providerMetadata } : {});

/** A result's reasoning and text as the prompt parts an assistant message holds them as. */
const promptParts = (content) => content.filter((p) => p.type === 'reasoning' || p.type === 'text')
  .map((p) => ({ type: p.type, text: p.text, ...carried(p) }));

const arguments_ = (input) => (typeof input === 'string' ? input : JSON.stringify(input ?? {}));

/** The prompt's messages as `[key, chat message, parts kept]`, a tool message's results one each. */
function messages(prompt, from) {
  const out = [];
  prompt.forEach((m, at) => {
    if (at < from) return;
    const key = (suffix, value) => `ai-sdk:${at}${suffix}:${createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 16)}`;
    if (m.role === 'tool') {
      m.content.forEach((p, j) => {
        if (p.type !== 'tool-result') return;
        out.push([key(`.${j}`, p), { role: 'tool', content: outputText(p.output), toolCallId: p.toolCallId, toolCalls: [] }, [{ role: 'tool', part: p }]]);
      });
      return;
    }
    if (m.role === 'assistant') {
      const calls = m.content.filter((p) => p.type === 'tool-call' && !p.providerExecuted)
        .map((p) => ({ id: p.toolCallId, name: p.toolName, arguments: arguments_(p.input) }));
      out.push([key('', m), { role: 'assistant', content: text(m.content), toolCalls: calls }, [m]]);
      return;
    }
    const content = typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('');
    out.push([key('', m), { role: m.role === 'system' ? 'system' : 'user', content, toolCalls: [] }, [m]]);
  });
  return out;
}

/** A message the engine wrote (the memory, a placeholder, `context_meta`) as a prompt message. */
function promptMessage(m, toolNames) {
  if (m.role === 'system') return { role: 'system', content: m.content };
  if (m.role === 'assistant') {
    const parts = m.content ? [{ type: 'text', text: m.content }] : [];
    for (const c of m.toolCalls) {
      let input;
      try {
        input = JSON.parse(c.arguments || '{}');
      } catch {
        input = {};
      }
      parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input });
    }
    return { role: 'assistant', content: parts };
  }
  if (m.role === 'tool') {
    return { role: 'tool', content: [{ type: 'tool-result', toolCallId: m.toolCallId ?? '', toolName: toolNames.get(m.toolCallId) ?? 'tool', output: { type: 'text', value: m.content } }] };
  }
  return { role: 'user', content: [{ type: 'text', text: m.content }] };
}

const same = (a, b) => a.role === b.role && a.content === b.content && (a.toolCallId ?? '') === (b.toolCallId ?? '')
  && a.toolCalls.length === b.toolCalls.length && a.toolCalls.every((c, i) => c.id === b.toolCalls[i].id && c.name === b.toolCalls[i].name && c.arguments === b.toolCalls[i].arguments);

/**
 * The middleware (see the module). `session` is a `workmem/session` Session (`Session.create`
 * or `Session.open`); the options are the fallback's (`window`, `compactAt`, `compactGoal`,
 * `keepRecent`, `remindAfterRounds`) and `count`, a token counter for another tokenizer than
 * o200k_base. A request that no compaction brings under the window throws WorkmemError
 * rather than being sent.
 */
export function workmemMiddleware({ session, ...options }) {
  const bound = new Bound(session, options);
  const own = bound.tools();
  const ownNames = new Set(own.map((t) => t.name));
  const originals = new WeakMap();

  /** Each logged message of a prompt by its sequence number: as the engine reads it, and the parts it came as. */
  async function keptBySeq() {
    const out = new Map();
    for (const r of await session.records()) {
      const kept = (r.opaque ?? []).filter((o) => !(o && typeof o === 'object' && 'key' in o));
      if (r.kind === 'message' && kept.length) out.set(r.seq, { message: recordMessage(r), kept: kept[0] });
    }
    return out;
  }

  async function bounded(params) {
    // workmem answers its tools' calls itself: an application's tool of one of their names would never be called.
    const clash = (params.tools ?? []).find((t) => ownNames.has(t.name));
    if (clash) throw new WorkmemError(`the application offers a tool named ${clash.name}, one of workmem's own (${[...ownNames].join(', ')}): rename it`);
    let system = 0;
    while (params.prompt[system]?.role === 'system') system++;
    const known = await bound.logged();
    await bound.log(messages(params.prompt, system).filter(([key]) => !known.has(key)).map(unshown));
    const tools = [...(params.tools ?? []), ...own.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }))];
    const definitions = tools.filter((t) => t.type === 'function').map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
    const request = await bound.request(params.prompt.slice(0, system).map((m) => m.content).join('\n\n'), await bound.toolsTokens(JSON.stringify(definitions)));
    const toolNames = new Map();
    for (const m of params.prompt) {
      if (m.role === 'assistant') for (const p of m.content) if (p.type === 'tool-call') toolNames.set(p.toolCallId, p.toolName);
    }
    const kept = await keptBySeq();
    const prompt = [{ role: 'system', content: request.system }];
    // Results of one turn's calls go back in one tool message, as they came.
    let results = null;
    for (const [seq, m] of request.messages) {
      const original = seq === null ? undefined : kept.get(seq);
      if (original && same(original.message, m)) {
        if (original.kept.role === 'tool' && original.kept.part) {
          if (!results) prompt.push((results = { role: 'tool', content: [] }));
          results.content.push(original.kept.part);
          continue;
        }
        prompt.push(original.kept);
      } else {
        for (const c of m.toolCalls ?? []) toolNames.set(c.id, c.name);
        prompt.push(promptMessage(m, toolNames));
      }
      results = null;
    }
    const out = { ...params, prompt, tools };
    originals.set(out, params);
    return out;
  }

  /**
   * Answers `calls` (workmem's own), logging the turn that made them (with `before`, its
   * reasoning and text as prompt parts, where the application does not get that turn) and the
   * answers.
   */
  async function answer(calls, before = []) {
    const id = randomUUID();
    const text = before.filter((p) => p.type === 'text').map((p) => p.text).join('');
    const assistant = { role: 'assistant', content: text, toolCalls: calls.map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: c.input })) };
    const results = [];
    for (const c of calls) {
      const args = parsed(c.input);
      const content = args === undefined ? 'error: the arguments are not JSON' : await bound.answer(c.toolName, args);
      results.push({ role: 'tool', content, toolCallId: c.toolCallId, toolCalls: [] });
    }
    const parts = (m) => [{ role: 'tool', part: { type: 'tool-result', toolCallId: m.toolCallId, toolName: calls.find((c) => c.toolCallId === m.toolCallId).toolName, output: { type: 'text', value: m.content } } }];
    const turn = [...before, ...calls.map((c) => ({ type: 'tool-call', toolCallId: c.toolCallId, toolName: c.toolName, input: parsed(c.input) ?? {}, ...carried(c) }))];
    await bound.log([
      [`ai-sdk:own:${id}`, assistant, [{ role: 'assistant', content: turn }]],
      ...results.map((m, i) => [`ai-sdk:own:${id}.${i}`, m, parts(m)]),
    ]);
  }

  // The reasoning and text of streamed rounds that were workmem's (logged with its calls), as
  // JSON, each as many times as it was streamed: the application's message for the step holds
  // them too, and is logged without them.
  const shown = new Map();
  const partKey = (p) => JSON.stringify([p.type, p.text, p.providerOptions ?? p.providerMetadata ?? null]);

  /** A new assistant message of the prompt without the parts a streamed round of workmem's showed. */
  function unshown(entry) {
    const [key, message, [original]] = entry;
    if (message.role !== 'assistant' || !shown.size) return entry;
    const content = original.content.filter((p) => {
      const n = shown.get(partKey(p)) ?? 0;
      if (n === 0) return true;
      if (n === 1) shown.delete(partKey(p));
      else shown.set(partKey(p), n - 1);
      return false;
    });
    if (content.length === original.content.length) return entry;
    return [key, { ...message, content: text(content) }, [{ ...original, content }]];
  }

  const isOwn = (p) => p.type === 'tool-call' && ownNames.has(p.toolName) && !p.providerExecuted;

  return {
    specificationVersion: 'v4',
    transformParams: async ({ params }) => bounded(params),

    wrapGenerate: async ({ doGenerate, params, model }) => {
      const original = originals.get(params) ?? params;
      let result = await doGenerate();
      for (let round = 0; round < MAX_OWN_ROUNDS; round++) {
        const calls = result.content.filter(isOwn);
        if (!calls.length) return result;
        const rest = result.content.filter((p) => !isOwn(p));
        // The application's own calls in the same turn go to it, with the turn's reasoning and
        // text; it calls again with their results.
        if (rest.some((p) => p.type === 'tool-call')) {
          await answer(calls);
          return { ...result, content: rest };
        }
        await answer(calls, promptParts(result.content));
        result = await model.doGenerate(await bounded(original));
      }
      return { ...result, content: result.content.filter((p) => !isOwn(p)) };
    },

    wrapStream: async ({ doStream, params, model }) => {
      const original = originals.get(params) ?? params;
      const first = await doStream();
      let source = first.stream.getReader();
      let rounds = 0;
      // One round: workmem's calls held back, whole, and what it said (its reasoning and text
      // stream to the application as they come, and go to the log with workmem's calls).
      let held;
      let calls;
      let appCalls;
      let said;
      const round = () => {
        held = new Map();
        calls = [];
        appCalls = false;
        said = new Map();
      };
      round();
      const saidParts = () => [...said.values()].map(({ type, text, providerMetadata }) => ({ type, text, ...(providerMetadata ? { providerOptions: providerMetadata } : {}) }));
      const stream = new ReadableStream({
        async pull(controller) {
          for (;;) {
            const { done, value: part } = await source.read();
            if (done) {
              controller.close();
              return;
            }
            if (part.type.startsWith('reasoning-') || part.type.startsWith('text-')) {
              const kind = part.type.split('-')[0];
              const entry = said.get(part.id) ?? { type: kind, text: '', providerMetadata: undefined };
              entry.text += part.delta ?? '';
              entry.providerMetadata = part.providerMetadata ?? entry.providerMetadata;
              said.set(part.id, entry);
            }
            // workmem's own calls are held back, whole, and answered at the finish.
            if (part.type === 'tool-input-start' && ownNames.has(part.toolName) && !part.providerExecuted) {
              held.set(part.id, part.toolName);
              continue;
            }
            if ((part.type === 'tool-input-delta' || part.type === 'tool-input-end') && held.has(part.id)) continue;
            if (isOwn(part)) {
              calls.push(part);
              continue;
            }
            if (part.type === 'tool-call') appCalls = true;
            if (part.type === 'finish' && calls.length && rounds < MAX_OWN_ROUNDS && !appCalls) {
              // The round was workmem's: its reasoning and text go to the log with its calls
              // (the text reached the application too, as it streamed).
              const parts = saidParts();
              await answer(calls, parts);
              for (const p of parts) shown.set(partKey(p), (shown.get(partKey(p)) ?? 0) + 1);
              rounds++;
              const next = await model.doStream(await bounded(original));
              source = next.stream.getReader();
              round();
              continue;
            }
            if (part.type === 'finish' && calls.length) await answer(calls);
            // Only the first answer's start goes to the application.
            if (part.type === 'stream-start' && rounds > 0) continue;
            controller.enqueue(part);
            return;
          }
        },
        cancel(reason) {
          return source.cancel(reason);
        },
      });
      return { ...first, stream };
    },
  };
}
