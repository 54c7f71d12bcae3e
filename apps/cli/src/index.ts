#!/usr/bin/env node
import { Command } from 'commander';

const program = new Command('pkgreg').description('Install and find agent-skill packages').version('0.1.0');
await program.parseAsync(process.argv);
