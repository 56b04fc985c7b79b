import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

// /mcp gets random and hostile input, as the other routes do in fuzzRoutes.test.ts: any method,
// body, header and credential at the transport, and any arguments to every tool a writer has. The
// answer is never a 5xx; an error is the spec's envelope (before MCP: credentials, origin, limits)
// or a JSON-RPC error (the transport's and the protocol's), and a tool's refusal is a tool error.

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = process.env.FUZZ_SEED === 'random' ? undefined : Number(process.env.FUZZ_SEED ?? 20261205);

const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '__proto__', 'x'.repeat(5000), -1, 1e308, null, [], {}, '0'.repeat(24), '{{user.id}}'),
);

describe('/mcp under random and hostile input', () => {
  let server: TestServer;
  let token: string;
  let session: string;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer(
      {},
      {
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          mcp: { enabled: true, readOnly: false, allowDelete: true, allowedOrigins: [] },
        },
      },
    );
    token = (await server.user({ roles: ['ADMIN'] })).token;
    client = new Client({ name: 'fuzz', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    // A session of its own for the transport's fuzzing, which may end it with DELETE.
    const opened = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    });
    session = opened.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('answers any request at the transport without a 5xx, in one of the two error shapes', async () => {
    const message = fc.oneof(
      hostile,
      fc.record({
        jsonrpc: fc.constantFrom('2.0', '1.0', 2),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null)),
        method: fc.oneof(
          fc.constantFrom('initialize', 'ping', 'tools/list', 'tools/call', 'resources/read', 'prompts/get', 'nope'),
          fc.string({ maxLength: 20 }),
        ),
        params: hostile,
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('POST', 'GET', 'DELETE', 'PUT', 'PATCH'),
        message,
        fc.constantFrom('none', 'valid', 'forged'),
        fc.constantFrom('none', 'valid', 'forged'),
        fc.constantFrom('application/json, text/event-stream', 'text/html', '*/*', ''),
        async (method, body, credential, sessionId, accept) => {
          const headers: Record<string, string> = { 'content-type': 'application/json', accept };
          if (credential !== 'none') headers.authorization = `Bearer ${credential === 'valid' ? token : 'egk_forged'}`;
          if (sessionId !== 'none') headers['mcp-session-id'] = sessionId === 'valid' ? session : 'forged.id';
          const response = await fetch(`${server.url}/mcp`, {
            method,
            headers,
            body: method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(10_000),
          });
          expect(response.status, `${method} ${JSON.stringify(body)}`).toBeLessThan(500);
          const type = response.headers.get('content-type') ?? '';
          if (type.startsWith('text/event-stream')) return void (await response.body?.cancel());
          const text = await response.text();
          if (response.status < 300 || text === '') return;
          const parsed = JSON.parse(text);
          const envelope = typeof parsed.error?.code === 'string' && typeof parsed.error?.message === 'string';
          const rpc = parsed.jsonrpc === '2.0' && typeof parsed.error?.code === 'number';
          expect(envelope || rpc, text).toBe(true);
        },
      ),
      { numRuns: RUNS * 8, seed: SEED },
    );
  });

  it('answers any arguments to every tool with a result or a tool error, never a 5xx', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(30);
    for (const tool of tools) {
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), hostile), hostile), async (args) => {
          let result: { isError?: boolean; content: { text: string }[] } | undefined;
          let refused: unknown;
          try {
            result = (await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> })) as {
              isError?: boolean;
              content: { text: string }[];
            };
          } catch (error) {
            refused = error;
          }
          // The SDK refuses arguments that are not an object before sending; the protocol answers -32602;
          // text no store can keep (NUL) is refused by the pipeline before MCP, in the envelope.
          if (refused) expect(String(refused), tool.name).toMatch(/-32602|Invalid|Expected object|VALIDATION_ERROR/i);
          else if (result?.isError) expect(result.content[0].text, tool.name).not.toMatch(/^INTERNAL_ERROR/);
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
  });
});
