// An existing Express application that serves entigen's API beside its own routes.
import { createEntigen } from 'entigen/runtime';
import express from 'express';
import { registry, repositories } from './generated/index.js';

const entigen = await createEntigen({ registry, repositories, root: process.cwd() });
const app = express();
app.get('/hello', (_req, res) => {
  res.json({ hello: 'from the host' });
});
// entigen's paths (/api/v1/..., /api/docs, /api/health, /setup) with its whole pipeline;
// every other request goes on to the host's routes. Mount it before any body parser.
app.use(entigen.handler);
app.use((_req, res) => {
  res.status(404).json({ host: 'no such page' });
});

const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => console.log(`listening on http://localhost:${port}`));
process.on('SIGTERM', () => server.close(() => void entigen.close()));
