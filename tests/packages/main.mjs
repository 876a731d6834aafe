// A user's program with the npm package: open a session the CLI made, apply an update,
// assemble the next request.
import { readFile } from 'node:fs/promises';
import { assemble, contextMeta } from 'workmem';
import { Session } from 'workmem/session';

const [dir, update] = process.argv.slice(2);
const session = await Session.open(dir);
const applied = await session.apply(await readFile(update, 'utf8'));
const messages = assemble({ systemPrompt: 'You are a careful engineer.', overview: await session.overview(), history: [{ role: 'user', content: 'Go on.' }] });
messages.push({ role: 'system', content: contextMeta({ tokensUsed: 1000, tokensMax: 128000 }), toolCalls: [] });
console.log(JSON.stringify({ runtime: 'js', seq: applied.seq, added: applied.added, messages: messages.length, overview: messages[1].content }));
