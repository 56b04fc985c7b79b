import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from '../config/runtimeConfig.js';
import type { ByteRange, FileStorage, StoredFile } from './fileStorage.js';

/** Parts of a streamed upload: 8 MB each, two in flight, so an upload holds at most about 16 MB. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

type Sdk = typeof import('@aws-sdk/client-s3') & Pick<typeof import('@aws-sdk/lib-storage'), 'Upload'>;

/** The AWS SDK, loaded when a bucket is first used: a server keeping its files on disk never loads it. */
let loading: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> =>
  (loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, storage]) => ({
    ...s3,
    Upload: storage.Upload,
  })));

const missing = (sdk: Sdk, error: unknown) =>
  error instanceof sdk.S3ServiceException &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404);

/**
 * Media files in an S3-compatible bucket, through the AWS SDK: streamed in by parts
 * (`@aws-sdk/lib-storage`), streamed out with ranges. Checksums are computed only where an
 * operation requires them, which every S3-compatible server accepts.
 */
export class S3Storage implements FileStorage {
  readonly driver = 's3' as const;
  private connected?: Promise<{ sdk: Sdk; client: S3Client }>;

  constructor(private readonly settings: S3Settings) {}

  private connect(): Promise<{ sdk: Sdk; client: S3Client }> {
    const { settings } = this;
    this.connected ??= loadSdk().then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        region: settings.region,
        endpoint: settings.endpoint,
        forcePathStyle: settings.forcePathStyle,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...(settings.accessKeyId && settings.secretAccessKey
          ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
          : {}),
      }),
    }));
    return this.connected;
  }

  private key(key: string): string {
    return `${this.settings.prefix}${key}`;
  }

  async put(key: string, body: Readable, contentType: string): Promise<void> {
    const { sdk, client } = await this.connect();
    await new sdk.Upload({
      client,
      params: { Bucket: this.settings.bucket, Key: this.key(key), Body: body, ContentType: contentType },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    }).done();
  }

  async get(key: string, range?: ByteRange): Promise<StoredFile | undefined> {
    const { sdk, client } = await this.connect();
    try {
      const answer = await client.send(
        new sdk.GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.key(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const total = /\/(\d+)$/.exec(answer.ContentRange ?? '')?.[1];
      return { body: answer.Body as Readable, size: total ? Number(total) : (answer.ContentLength ?? 0) };
    } catch (error) {
      if (missing(sdk, error)) return undefined;
      throw error;
    }
  }

  async size(key: string): Promise<number | undefined> {
    const { sdk, client } = await this.connect();
    try {
      const head = await client.send(new sdk.HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (missing(sdk, error)) return undefined;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    const { sdk, client } = await this.connect();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
  }

  async removeAll(prefix: string): Promise<void> {
    // One by one: DeleteObjects needs a checksum header not every S3-compatible server takes.
    for await (const key of this.list(`${prefix}/`)) await this.remove(key);
  }

  async *list(prefix = ''): AsyncIterable<string> {
    const { sdk, client } = await this.connect();
    let token: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.settings.bucket,
          Prefix: this.key(prefix),
          ContinuationToken: token,
        }),
      );
      for (const item of page.Contents ?? []) if (item.Key) yield item.Key.slice(this.settings.prefix.length);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async close(): Promise<void> {
    if (this.connected) (await this.connected).client.destroy();
  }
}
