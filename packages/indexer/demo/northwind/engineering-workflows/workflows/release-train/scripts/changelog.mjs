// Drafts a changelog from conventional commits since the given tag.
import { execFileSync } from 'node:child_process';

const since = process.argv[2] ?? '';
const log = execFileSync('git', ['log', '--format=%s', since ? `${since}..HEAD` : 'HEAD'], { encoding: 'utf8' });
const groups = { feat: [], fix: [], other: [] };
for (const line of log.split('\n').filter(Boolean)) {
  const type = line.split(':')[0].replace(/\(.*\)!?$/, '');
  (groups[type] ?? groups.other).push(line);
}
for (const [type, lines] of Object.entries(groups)) {
  if (lines.length) console.log(`## ${type}\n${lines.map((l) => `- ${l}`).join('\n')}\n`);
}
