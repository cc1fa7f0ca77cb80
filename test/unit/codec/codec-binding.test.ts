/**
 * The codec's require-encryption mode and workflow binding: with a key set, plaintext payloads are refused
 * (unless SAGA_CODEC_ALLOW_PLAINTEXT=1, or for the Web UI's viewing endpoint); a ciphertext written for one
 * workflow (namespace + workflow id, authenticated as AES-GCM additional data) does not decrypt in another, nor
 * with its binding altered or stripped; ciphertexts from before bindings (none) still decrypt.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { codecFromEnv } from '../../../src/codec/config';
import { METADATA_BINDING, bindingOf } from '../../../src/codec/encryption-codec';

const KEY = randomBytes(32);
const env = { SAGA_CODEC_KEY: KEY.toString('hex') };
const codec = codecFromEnv(env)!;
const wf = (workflowId: string, namespace = 'default'): SerializationContext => ({
  type: 'workflow',
  namespace,
  workflowId,
});
const goal = () => defaultPayloadConverter.toPayload({ goal: 'ship it', command: 'claude -p' });
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('require-encryption mode', () => {
  test('with a key set, a plaintext payload is refused with what to do', async () => {
    await expect(codec.decode([goal()], wf('saga-demo'))).rejects.toThrow(
      /Refused a payload that is not encrypted \(workflow 'saga-demo' of namespace 'default'\).*SAGA_CODEC_ALLOW_PLAINTEXT=1/,
    );
    expect(codec.requiresEncryption).toBe(true);
  });

  test('SAGA_CODEC_ALLOW_PLAINTEXT=1 and the viewing endpoint let plaintext through; a bad value is an error', async () => {
    const lenient = codecFromEnv({ ...env, SAGA_CODEC_ALLOW_PLAINTEXT: '1' })!;
    const viewing = codecFromEnv(env, { forViewing: true })!;
    for (const c of [lenient, viewing]) expect(await c.decode([goal()], wf('saga-demo'))).toEqual([goal()]);
    expect(codecFromEnv({ ...env, SAGA_CODEC_ALLOW_PLAINTEXT: '0' })!.requiresEncryption).toBe(true);
    expect(() => codecFromEnv({ ...env, SAGA_CODEC_ALLOW_PLAINTEXT: 'maybe' })).toThrow(
      /SAGA_CODEC_ALLOW_PLAINTEXT is 'maybe'/,
    );
    expect(() => codecFromEnv({ SAGA_CODEC_ALLOW_PLAINTEXT: '1' })).toThrow(/no key is/);
  });
});

describe('binding a ciphertext to its workflow', () => {
  test('a payload written for a workflow names it and decrypts there (and without a context)', async () => {
    const [sealed] = await codec.encode([goal()], wf('saga-demo'));
    expect(text(sealed!.metadata![METADATA_BINDING])).toBe(bindingOf(wf('saga-demo')));
    expect(text(sealed!.metadata![METADATA_BINDING])).not.toContain('saga-demo');
    expect(await codec.decode([sealed!], wf('saga-demo'))).toEqual([goal()]);
    expect(await codec.decode([sealed!])).toEqual([goal()]);
    // An activity's payloads are bound to the workflow that scheduled it: the two sides agree.
    const activity: SerializationContext = {
      type: 'activity',
      namespace: 'default',
      workflowId: 'saga-demo',
      activityId: '1',
      isLocal: false,
    };
    expect(await codec.decode([sealed!], activity)).toEqual([goal()]);
  });

  test('copied into another workflow or namespace, it is refused', async () => {
    const [sealed] = await codec.encode([goal()], wf('saga-demo'));
    await expect(codec.decode([sealed!], wf('saga-other'))).rejects.toThrow(
      "Refused a payload encrypted for another workflow than workflow 'saga-other' of namespace 'default'",
    );
    await expect(codec.decode([sealed!], wf('saga-demo', 'prod'))).rejects.toThrow(/Refused a payload/);
  });

  test('its binding altered to the other workflow, or stripped, it fails authentication', async () => {
    const [sealed] = await codec.encode([goal()], wf('saga-demo'));
    const rebound: Payload = {
      ...sealed!,
      metadata: { ...sealed!.metadata, [METADATA_BINDING]: Buffer.from(bindingOf(wf('saga-other'))!) },
    };
    await expect(codec.decode([rebound], wf('saga-other'))).rejects.toThrow(/authentication failed/);
    const { [METADATA_BINDING]: _gone, ...rest } = sealed!.metadata!;
    await expect(codec.decode([{ ...sealed!, metadata: rest }], wf('saga-other'))).rejects.toThrow(
      /authentication failed/,
    );
  });

  test('a ciphertext from before bindings (no additional data) still decrypts anywhere', async () => {
    // Written as the codec wrote them before: IV + AES-GCM of the Payload protobuf, no additional data.
    const plain = temporal.api.common.v1.Payload.encode(goal()).finish();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', KEY, iv);
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    const old: Payload = {
      metadata: {
        encoding: Buffer.from('binary/encrypted'),
        'encryption-key-id': Buffer.from(codec.keyId),
      },
      data,
    };
    expect(await codec.decode([old], wf('saga-anything'))).toEqual([goal()]);
  });

  test('without a workflow in the context (client calls that name none), payloads are unbound', async () => {
    const [sealed] = await codec.encode([goal()]);
    expect(sealed!.metadata![METADATA_BINDING]).toBeUndefined();
    expect(await codec.decode([sealed!], wf('saga-demo'))).toEqual([goal()]);
  });
});
