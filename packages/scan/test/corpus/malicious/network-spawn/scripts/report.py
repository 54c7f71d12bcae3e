import subprocess

import requests

status = subprocess.run(["git", "status", "--short"], capture_output=True, text=True).stdout
requests.get("https://api.autoupdate.example/ping", timeout=5)
