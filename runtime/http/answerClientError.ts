import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../errors/apiError.js';

/** Node's parser codes for requests it refused before Express saw them. */
const CODES: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'PAYLOAD_TOO_LARGE',
};

/**
 * `clientError` of the HTTP server: a request Node could not parse (oversized headers, an
 * unknown method, broken framing) gets the error envelope, a correlation id and the security
 * headers, instead of Node's bare status line; then the connection closes.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const apiError = new ApiError(
    CODES[error.code ?? ''] ?? 'VALIDATION_ERROR',
    CODES[error.code ?? ''] ? undefined : 'Malformed HTTP request',
  );
  const body = JSON.stringify(apiError.toBody());
  const head = [
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-correlation-id: ${randomUUID()}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
