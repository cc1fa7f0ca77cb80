/**
 * The test Gitea's app.ini (test/harness/gitea.ts): headless (INSTALL_LOCK), sqlite, on 127.0.0.1 only, no
 * SSH, no mailer, no Actions, offline (no update checks, no external assets); webhooks may call loopback
 * addresses (the chat bridge the forge tests run). Everything lives under its work dir.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';

export function appIni(dir: string, port: number): string {
  return `APP_NAME = saga test forge
RUN_MODE = prod
RUN_USER = ${os.userInfo().username}
WORK_PATH = ${dir}

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${port}
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:${port}/
APP_DATA_PATH = ${dir}/data
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = ${dir}/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${dir}/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = ${randomBytes(24).toString('hex')}
PASSWORD_COMPLEXITY = off
MIN_PASSWORD_LENGTH = 8
PASSWORD_HASH_ALGO = pbkdf2

[service]
DISABLE_REGISTRATION = true
ENABLE_NOTIFY_MAIL = false
DEFAULT_KEEP_EMAIL_PRIVATE = true

[mailer]
ENABLED = false

[oauth2]
ENABLED = false

[actions]
ENABLED = false

[webhook]
ALLOWED_HOST_LIST = loopback

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[cron.update_checker]
ENABLED = false

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = ${dir}/log
`;
}
