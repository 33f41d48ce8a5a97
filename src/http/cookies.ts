import type { FastifyReply, FastifyRequest } from 'fastify';

/** The browser session's cookie; its value is the session token, stored only as a hash. */
export const SESSION_COOKIE = 'warmup_session';

// Browsers send a few kilobytes of cookies at most; anything longer is not read.
const MAX_COOKIE_HEADER = 8_192;

/** One cookie's value from the request, or undefined. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || header.length > MAX_COOKIE_HEADER) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (no cross-site form posts carry it), Secure when the
 * request came over HTTPS (behind a proxy only with trustProxy, which makes X-Forwarded-Proto count).
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, expiresAt: string): void {
  const maxAge = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  reply.header('Set-Cookie', sessionCookie(request, token, maxAge));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('Set-Cookie', sessionCookie(request, '', 0));
}

function sessionCookie(request: FastifyRequest, value: string, maxAge: number): string {
  return cookieLine(request, SESSION_COOKIE, value, maxAge, '/');
}

function cookieLine(request: FastifyRequest, name: string, value: string, maxAge: number, path: string): string {
  const parts = [`${name}=${value}`, `Path=${path}`, `Max-Age=${maxAge}`, 'HttpOnly', 'SameSite=Lax'];
  if (request.protocol === 'https') parts.push('Secure');
  return parts.join('; ');
}

/** Another short-lived cookie with the session cookie's protections, sent only below `path`. */
export function setScopedCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  cookie: { name: string; value: string; maxAgeS: number; path: string },
): void {
  reply.header('Set-Cookie', cookieLine(request, cookie.name, cookie.value, cookie.maxAgeS, cookie.path));
}
