<?php
/* Lab settings for the wiki mediawiki.sh installs, copied next to the LocalSettings.php that
 * install.php wrote (as LabSettings.php) and loaded at its end, so they win.
 *
 * One wiki and one database serve two variants: each PHP server picks its skin from its
 * environment (MWLAB_SKIN), and users cannot override it with a preference. Every URL follows the
 * request's Host: the proxy under test sends requests for the source URL to the target port
 * with the source's Host, and links must keep pointing at the source. */
if (isset($_SERVER['HTTP_HOST'])) {
    // Not protocol-relative: with that, the login form offers a "secure connection" (https) link
    // that no lab server answers.
    $https = ($_SERVER['HTTPS'] ?? '') === 'on' || ($_SERVER['HTTP_X_FORWARDED_PROTO'] ?? '') === 'https';
    $wgServer = ($https ? 'https://' : 'http://') . $_SERVER['HTTP_HOST'];
}
$wgScriptPath = '';
$wgArticlePath = '/index.php/$1';

// install.php --skins Vector loaded the skin: it registers both 'vector' and 'vector-2022'.
$wgDefaultSkin = getenv('MWLAB_SKIN') ?: 'vector';
$wgHiddenPrefs[] = 'skin';
$wgVectorSkinMigrationMode = false;  // 'vector' stays the 2010 skin, whatever a user's preference

// Files next to the database, not in the system's /var/lib/mediawiki.
$wgCacheDirectory = __DIR__ . '/cache';
$wgEnableUploads = false;
// The package has no favicon.ico: without a real icon every page view logs a 404 in the console.
$wgFavicon = '/resources/assets/change-your-logo-icon.svg';
// A real logo instead of the installer's "Set $wgLogos..." placeholder (the same on both skins).
$wgLogos = ['1x' => '/resources/assets/mediawiki.png', 'icon' => '/resources/assets/mediawiki.png'];

// Nothing leaves loopback, and scripted tasks log in many times in a row (failed tries too).
$wgEnableEmail = false;
$wgEnableUserEmail = false;
$wgUseInstantCommons = false;
$wgPingback = false;
$wgPasswordAttemptThrottle = false;
$wgJobRunRate = 0;  // jobs run from the seed script, not from page views racing for SQLite

$wgShowExceptionDetails = true;
