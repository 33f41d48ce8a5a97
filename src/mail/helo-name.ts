// The name Warmup's SMTP connections greet with (EHLO). A person's mail program greets with its
// computer's name; an address literal such as `[127.0.0.1]` is what scripts send, and filters
// notice it. The operator's public host name (WARMUP_HOSTNAME, else the host of WARMUP_PUBLIC_URL)
// comes first, then the machine's own name; never an address.
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import type { MailPolicy } from './policy.js';

/** A name a server may be greeted with: letters, digits, hyphens and dots, and not an address. */
export function isHostName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 253 &&
    isIP(name.replace(/^\[|\]$/g, '')) === 0 &&
    /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(name)
  );
}

/** The configured name when it is one, else the machine's (a bare name is still no address literal). */
export function heloNameOf(policy: MailPolicy | undefined, machine: string = hostname()): string {
  if (policy?.heloName && isHostName(policy.heloName)) return policy.heloName;
  if (isHostName(machine)) return machine;
  return 'localhost';
}

/** WARMUP_HOSTNAME, else the host of WARMUP_PUBLIC_URL when it is a name (not an address, not localhost). */
export function operatorHostName(explicit: string | undefined, publicUrl: string | undefined): string | undefined {
  if (explicit) return explicit;
  if (!publicUrl) return undefined;
  try {
    const host = new URL(publicUrl).hostname;
    return isHostName(host) && host !== 'localhost' && host.includes('.') ? host : undefined;
  } catch {
    return undefined;
  }
}
