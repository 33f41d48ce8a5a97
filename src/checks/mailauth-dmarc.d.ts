// mailauth ships no types for this module: the shape of what it returns, as far as the checks read it.
declare module 'mailauth/lib/dmarc/get-dmarc-record.js' {
  export interface DmarcRecord {
    p?: string;
    adkim?: string;
    aspf?: string;
    rr: string;
    isOrgRecord: boolean;
  }
  export default function getDmarcRecord(
    domain: string,
    resolver: (name: string, rrtype: string) => Promise<unknown>,
  ): Promise<DmarcRecord | false>;
}
