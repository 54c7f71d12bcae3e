// Renders classified entries (JSON on stdin) into the markdown template.
import { readFileSync } from 'node:fs';

const entries = JSON.parse(readFileSync(0, 'utf8'));
const template = readFileSync(new URL('../assets/changelog-template.md', import.meta.url), 'utf8');
const section = (kind) => entries.filter((e) => e.kind === kind).map((e) => `- ${e.text}`).join('\n');
console.log(template.replace('{{features}}', section('feature')).replace('{{fixes}}', section('fix')));
