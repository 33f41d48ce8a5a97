#!/usr/bin/env node
// The package's bin: runs the TypeScript sources through tsx, so a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
