// A report attachment's bytes to the XML inside: gzip (.xml.gz), zip (.zip with one XML member)
// or plain XML, as Google, Microsoft, Yahoo and the others send them. The format is told by the
// bytes (the name and type only say whether an attachment may be a report at all), and every
// size is capped before and while inflating: a bomb stops at the cap, however it lies.
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { ReportRefused } from './report-xml.js';

export interface ArchiveLimits {
  /** The most of an attachment read (compressed, or plain XML). */
  maxCompressedBytes: number;
  /** The most XML one attachment may inflate to. */
  maxXmlBytes: number;
  /** Entries a zip may list (a report's zip has one). */
  maxZipEntries: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxCompressedBytes: 10 * 1024 * 1024,
  maxXmlBytes: 20 * 1024 * 1024,
  maxZipEntries: 4,
};

const MIB = 1024 * 1024;

const isGzip = (bytes: Buffer) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
const isZip = (bytes: Buffer) => bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50;

/** Whether an attachment's name or type says it may be a report: only those are opened. */
export function mayBeReport(name: string | null, contentType: string | null): boolean {
  const type = (contentType ?? '').toLowerCase();
  const file = (name ?? '').toLowerCase();
  return (
    /\.(xml|xml\.gz|gz|zip)$/.test(file) ||
    [
      'application/gzip',
      'application/x-gzip',
      'application/zip',
      'application/x-zip-compressed',
      'application/xml',
      'text/xml',
    ].includes(type)
  );
}

/** The XML text of a report attachment. Throws ReportRefused for anything else. */
export function unpackReport(bytes: Buffer, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): string {
  if (bytes.length > limits.maxCompressedBytes) {
    throw new ReportRefused('oversized', `The attachment is larger than ${limits.maxCompressedBytes / MIB} MiB.`);
  }
  let xml: Buffer;
  if (isGzip(bytes)) xml = gunzip(bytes, limits);
  else if (isZip(bytes)) xml = unzipOne(bytes, limits);
  else xml = bytes;
  if (isGzip(xml) || isZip(xml)) {
    throw new ReportRefused('nested_archive', 'The archive holds another archive; reports are never packed twice.');
  }
  return new TextDecoder('utf-8').decode(xml);
}

function tooLarge(limits: ArchiveLimits): ReportRefused {
  return new ReportRefused('oversized', `The report inflates to more than ${limits.maxXmlBytes / MIB} MiB.`);
}

function isOutputCapError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError;
}

function gunzip(bytes: Buffer, limits: ArchiveLimits): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: limits.maxXmlBytes });
  } catch (err) {
    if (isOutputCapError(err)) throw tooLarge(limits);
    throw new ReportRefused('damaged', 'The gzip attachment is damaged or cut short.');
  }
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
/** The end record is 22 bytes, followed by a comment of at most 65,535. */
const EOCD_SEARCH = 22 + 0xffff;

function damagedZip(what: string): ReportRefused {
  return new ReportRefused('damaged', `The zip attachment is damaged or cut short (${what}).`);
}

/**
 * The one member of a report's zip, read from the central directory (which has the sizes even
 * when the local headers defer them): no Zip64, no encryption, deflate or stored only, the
 * declared size under the cap, the real size held to the cap while inflating and then to the
 * declared size, and the CRC checked.
 */
function unzipOne(bytes: Buffer, limits: ArchiveLimits): Buffer {
  let eocd = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - EOCD_SEARCH); at--) {
    if (bytes.readUInt32LE(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw damagedZip('no end of central directory');
  const entries = bytes.readUInt16LE(eocd + 10);
  const directorySize = bytes.readUInt32LE(eocd + 12);
  const directoryAt = bytes.readUInt32LE(eocd + 16);
  if (entries === 0xffff || directoryAt === 0xffffffff) {
    throw new ReportRefused('unsupported', 'The zip attachment is a Zip64 archive, which reports never need.');
  }
  if (entries > limits.maxZipEntries) {
    throw new ReportRefused('too_many_entries', `The zip attachment lists ${entries} files; a report's zip has one.`);
  }
  if (directoryAt + directorySize > eocd) throw damagedZip('central directory out of bounds');

  const members: Array<{
    name: string;
    method: number;
    flags: number;
    crc: number;
    packed: number;
    size: number;
    local: number;
  }> = [];
  let at = directoryAt;
  for (let k = 0; k < entries; k++) {
    if (at + 46 > eocd || bytes.readUInt32LE(at) !== CENTRAL_SIGNATURE) throw damagedZip('bad central directory entry');
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const name = bytes.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    members.push({
      name,
      flags: bytes.readUInt16LE(at + 8),
      method: bytes.readUInt16LE(at + 10),
      crc: bytes.readUInt32LE(at + 16),
      packed: bytes.readUInt32LE(at + 20),
      size: bytes.readUInt32LE(at + 24),
      local: bytes.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  // folders and the like are passed over; exactly one file must remain
  const files = members.filter((m) => !m.name.endsWith('/'));
  if (files.some((m) => /\.(zip|gz|tgz|tar|7z|rar)$/i.test(m.name))) {
    throw new ReportRefused(
      'nested_archive',
      'The zip attachment holds another archive; reports are never packed twice.',
    );
  }
  if (files.length !== 1) {
    throw new ReportRefused(
      'too_many_entries',
      `The zip attachment holds ${files.length} files; a report's zip has one.`,
    );
  }
  const member = files[0]!;
  if (member.flags & 0x1) throw new ReportRefused('unsupported', 'The zip attachment is encrypted.');
  if (member.size === 0xffffffff || member.packed === 0xffffffff) {
    throw new ReportRefused('unsupported', 'The zip attachment is a Zip64 archive, which reports never need.');
  }
  if (member.size > limits.maxXmlBytes) throw tooLarge(limits);

  const local = member.local;
  if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== LOCAL_SIGNATURE) throw damagedZip('bad local header');
  const dataAt = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
  if (dataAt + member.packed > bytes.length) throw damagedZip('member cut short');
  const packed = bytes.subarray(dataAt, dataAt + member.packed);

  let data: Buffer;
  if (member.method === 0) {
    data = packed;
  } else if (member.method === 8) {
    try {
      // the cap is the declared size (plus one byte, to see a lie): a member that says 1 KiB
      // and inflates to 1 GiB stops after 1 KiB
      data = inflateRawSync(packed, { maxOutputLength: Math.min(limits.maxXmlBytes, member.size + 1) });
    } catch (err) {
      if (isOutputCapError(err)) {
        throw new ReportRefused('oversized', 'The zip attachment inflates to more than it declares.');
      }
      throw damagedZip('deflate data');
    }
  } else {
    throw new ReportRefused('unsupported', `The zip attachment uses compression method ${member.method}.`);
  }
  if (data.length !== member.size)
    throw new ReportRefused('oversized', 'The zip attachment inflates to more than it declares.');
  if (crc32(data) !== member.crc) throw damagedZip('checksum');
  return data;
}
