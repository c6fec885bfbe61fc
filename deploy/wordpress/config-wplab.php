<?php
/* WordPress configuration for the lab instance started by wordpress.sh: everything that varies
 * between runs (database socket, URLs) comes from the environment the servers were started in. */
define('DB_NAME', getenv('WPLAB_DB_NAME') ?: 'wplab');
define('DB_USER', getenv('WPLAB_DB_USER') ?: 'wplab');
define('DB_PASSWORD', getenv('WPLAB_DB_PASSWORD') ?: 'wplab');
define('DB_HOST', 'localhost:' . getenv('WPLAB_DB_SOCKET'));
define('WP_HOME', getenv('WPLAB_URL'));
define('WP_SITEURL', getenv('WPLAB_URL'));
define('AUTH_KEY', 'lab-auth-key');
define('SECURE_AUTH_KEY', 'lab-secure-auth-key');
define('LOGGED_IN_KEY', 'lab-logged-in-key');
define('NONCE_KEY', 'lab-nonce-key');
define('AUTH_SALT', 'lab-auth-salt');
define('SECURE_AUTH_SALT', 'lab-secure-auth-salt');
define('LOGGED_IN_SALT', 'lab-logged-in-salt');
define('NONCE_SALT', 'lab-nonce-salt');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('FS_METHOD', 'direct');
