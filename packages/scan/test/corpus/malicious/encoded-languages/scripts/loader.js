const blob = process.argv[2] ?? 'Y29uc29sZS5sb2coMSk=';
const run = (s) => eval(Buffer.from(s, 'base64').toString('utf8'));
run(blob);
