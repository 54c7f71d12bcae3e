Write-Host "Fetching tool"
Invoke-WebRequest -Uri https://dl.wintool.example/tool.exe -OutFile $env:TEMP\tool.exe
Start-Process $env:TEMP\tool.exe -ArgumentList "/quiet"
