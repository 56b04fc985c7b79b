import type { EnvironmentVariable } from '../config/environment.js';

/** Where media files live: the upload drivers' variables (backups to `s3://` read the S3 ones too). */
export const MEDIA_VARIABLES: readonly EnvironmentVariable[] = [
  {
    name: 'UPLOADS_DRIVER',
    group: 'store',
    description: 'Where media files live: `local` (the folder `uploads.dir`) or `s3` (an S3-compatible bucket).',
    default: 'local',
    configKey: 'uploads.driver',
  },
  {
    name: 'UPLOADS_DIR',
    group: 'store',
    description: 'The folder of the `local` upload driver, relative to the project.',
    default: 'data/uploads',
    configKey: 'uploads.dir',
  },
  {
    name: 'S3_BUCKET',
    group: 'store',
    description: 'The bucket of the `s3` upload driver (backups to `s3://` take the server and credentials below too).',
    configKey: 'uploads.bucket',
  },
  {
    name: 'S3_ENDPOINT',
    group: 'store',
    description: 'An S3-compatible server (MinIO, Ceph, R2, s3rver); unset, AWS itself for the region.',
    configKey: 'uploads.endpoint',
  },
  {
    name: 'S3_REGION',
    group: 'store',
    description: "The bucket's region.",
    default: 'us-east-1',
    configKey: 'uploads.region',
  },
  {
    name: 'S3_PREFIX',
    group: 'store',
    description: 'Folders every key begins with (`media/`), so one bucket can hold several apps.',
    default: '(none)',
    configKey: 'uploads.prefix',
  },
  {
    name: 'S3_FORCE_PATH_STYLE',
    group: 'store',
    description:
      '`true` or `false`: path-style addresses (`endpoint/bucket/key`), which most S3-compatible servers need.',
    default: '`true` with an endpoint, else `false`',
    configKey: 'uploads.forcePathStyle',
  },
  {
    name: 'S3_ACCESS_KEY_ID',
    group: 'secrets',
    description:
      "The bucket's access key; unset, the AWS SDK's own chain (AWS_ACCESS_KEY_ID, a profile, an instance role).",
  },
  {
    name: 'S3_SECRET_ACCESS_KEY',
    group: 'secrets',
    description: 'The secret of that access key.',
  },
];
