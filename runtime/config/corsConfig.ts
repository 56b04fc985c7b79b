/** `cors:` in entigen.config.yaml (CORS_ORIGINS and CORS_CREDENTIALS override it). */
export interface CorsConfig {
  /** Allowed origins: `https://app.example.org`, `https://*.example.org`, or `*` (any, without credentials). Empty: none. */
  origins: string[];
  /** Let browsers send cookies and read answers of credentialed requests (Access-Control-Allow-Credentials). */
  credentials: boolean;
  /** Seconds a browser may cache a preflight answer. */
  maxAge: number;
}

/** Checks the configuration once; a mistake stops the server at start with a clear message. */
export function checkCorsConfig(config: CorsConfig): void {
  for (const origin of config.origins) {
    if (origin === '*') {
      if (config.credentials)
        throw new Error(
          'cors: origins "*" cannot be combined with credentials: true (browsers refuse it); list the origins',
        );
      continue;
    }
    if (!/^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/.test(origin)) {
      throw new Error(
        `cors: "${origin}" is not an origin; write scheme://host[:port] without a path, e.g. https://app.example.org or https://*.example.org`,
      );
    }
  }
}
