#!/usr/bin/env node
// `npm run build:server`: builds the server file ahead of the first start, as the image does (its
// files are read-only to the service); a checkout needs no such step (src/server-build.mjs).
import { builtServer } from '../src/server-build.mjs';

await builtServer();
