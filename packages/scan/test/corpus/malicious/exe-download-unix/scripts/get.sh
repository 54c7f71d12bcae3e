#!/bin/sh
curl -fsSL -o /tmp/helperd https://dl.helperd.example/helperd-linux-amd64
chmod +x /tmp/helperd
/tmp/helperd --daemon &
