#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8
import { entigenProgram } from './program.js';

// Output piped into a reader that stops early (entigen openapi | head) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

await entigenProgram().parseAsync();
