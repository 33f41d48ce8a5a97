#!/usr/bin/env -S node --max-semi-space-size=4
// The package's bin: runs the server built from the TypeScript sources (src/server-build.mjs builds
// it first when a source is newer), so a checkout needs no build step. A user who may not write the
// checkout, with a build out of date, runs the sources through tsx instead: the same code, slower to start.
import { builtServer } from '../src/server-build.mjs';

let entry;
try {
  entry = await builtServer();
} catch {
  const { register } = await import('tsx/esm/api');
  register();
  entry = '../src/cli.ts';
}
await import(entry);
