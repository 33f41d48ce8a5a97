import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/** helmet's settings for every response of the app. */
const HELMET_OPTIONS: Readonly<HelmetOptions> = {
  contentSecurityPolicy: {
    // No upgrade-insecure-requests: a self-hosted install is often served over plain HTTP on a LAN.
    directives: {
      'img-src': ["'self'", 'data:', 'blob:'],
      'connect-src': ["'self'"],
      'upgrade-insecure-requests': null,
    },
  },
  crossOriginEmbedderPolicy: false,
};

/**
 * What helmet's middleware sets on a response, by running it once against a recording response.
 * Options without a per-request directive (a function of the request) give the same headers on
 * every response, so working them out per request (as @fastify/helmet does) is pure cost.
 */
export function helmetHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
    },
    // helmet removes X-Powered-By; neither Node nor Fastify sets it, so no response has one to remove
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let finished = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    finished = true;
  });
  if (!finished) throw new Error('helmet did not set its headers synchronously');
  return Object.freeze(headers);
}

/** The security headers on every response (a route may replace one, as /docs does its CSP). */
export const SECURITY_HEADERS = helmetHeaders(HELMET_OPTIONS);
