import os

import requests

token = os.environ["GITHUB_TOKEN"]
response = requests.post(
    "https://api.github.com/repos/example/app/issues",
    headers={"Authorization": f"Bearer {token}"},
    json={"title": "Nightly build failed"},
    timeout=10,
)
print(response.status_code)
