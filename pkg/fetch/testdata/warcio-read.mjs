// Reads WARC files with warcio (the Webrecorder project's reader, from the
// npm registry) and prints one JSON line per record, so the Go test can
// check that an independent implementation reads back everything fetch
// wrote. Usage: node warcio-read.mjs WARCIO_DIR FILE...
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';

const [dir, ...files] = process.argv.slice(2);
const { WARCParser } = await import(pathToFileURL(path.join(dir, 'node_modules/warcio/dist/index.js')).href);

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
function base32(buf) {
  let bits = 0, value = 0, out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8) out += '=';
  return out;
}

for (const file of files) {
  const parser = new WARCParser(fs.createReadStream(file));
  for await (const rec of parser) {
    const raw = await rec.readFully(false);
    const line = {
      file: path.basename(file),
      offset: parser.offset,
      type: rec.warcType,
      uri: rec.warcTargetURI,
      payloadDigest: rec.warcPayloadDigest || '',
      computedDigest: 'sha1:' + base32(crypto.createHash('sha1').update(raw).digest()),
      status: rec.httpHeaders && rec.httpHeaders.statusCode ? Number(rec.httpHeaders.statusCode) : 0,
      length: raw.length,
      profile: rec.warcHeader('WARC-Profile') || '',
      refersToURI: rec.warcRefersToTargetURI || '',
      refersToDate: rec.warcRefersToDate || '',
      concurrentTo: rec.warcHeader('WARC-Concurrent-To') || '',
      refersTo: rec.warcHeader('WARC-Refers-To') || '',
      id: rec.warcHeader('WARC-Record-ID') || '',
      contentType: rec.warcContentType || '',
    };
    console.log(JSON.stringify(line));
  }
}
