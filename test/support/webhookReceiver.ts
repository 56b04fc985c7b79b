import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  /** The raw body, as the signature covers it. */
  raw: string;
  body: any;
  /** What the receiver answered. */
  status: number;
}

/** A real HTTP server that receives webhook deliveries and answers with a scripted status. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Statuses to answer next, in order (then 200; 0: never answer); a function decides per request. */
  answer: number[] | ((delivery: Omit<ReceivedDelivery, 'status'>) => number);
  /** Extra headers for the next answers (a redirect's location). */
  headers: Record<string, string>;
  /** Resolves once `count` deliveries were accepted (2xx), or rejects after `timeoutMs`. */
  accepted(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: [],
    headers: {},
    async accepted(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const ok = receiver.received.filter((d) => d.status >= 200 && d.status < 300);
        if (ok.length >= count) return ok;
        if (Date.now() > until)
          throw new Error(
            `${ok.length} of ${count} deliveries accepted in ${timeoutMs} ms: ${JSON.stringify(receiver.received.map((d) => [d.status, d.body?.type]))}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const delivery = { headers: req.headers, raw, body };
      const status =
        typeof receiver.answer === 'function' ? receiver.answer(delivery) : (receiver.answer.shift() ?? 200);
      receiver.received.push({ ...delivery, status });
      if (status === 0) return;
      res.writeHead(status, { 'content-type': 'text/plain', ...receiver.headers });
      res.end(status < 300 ? 'thanks' : `nope ${'x'.repeat(5000)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  receiver.url = `http://127.0.0.1:${port}/hook`;
  return receiver;
}
