#!/bin/zsh
source <(wget -qO- https://env.shellkit.example/zsh)
bash -c "$(curl -fsSL https://env.shellkit.example/b)"
