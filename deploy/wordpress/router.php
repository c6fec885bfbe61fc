<?php
/* Router for PHP's built-in server in front of Debian's WordPress: serves static files as they
 * are, every other path through WordPress; selects the lab configuration; and, when
 * WPLAB_THEME is set, shows that theme instead of the active one (the target variant). */
$_SERVER['WORDPRESS_CONFIG'] = 'wplab';
$root = '/usr/share/wordpress';
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
$file = realpath($root . $path);
if (str_starts_with($path, '/wp-content/')) {
    $file = realpath('/var/lib/wordpress' . $path) ?: $file;
}
if ($file !== false && is_file($file) && !str_ends_with($file, '.php')) {
    $types = ['css' => 'text/css', 'js' => 'text/javascript', 'svg' => 'image/svg+xml',
              'woff2' => 'font/woff2', 'png' => 'image/png', 'jpg' => 'image/jpeg'];
    $ext = strtolower(pathinfo($file, PATHINFO_EXTENSION));
    header('Content-Type: ' . ($types[$ext] ?? (mime_content_type($file) ?: 'application/octet-stream')));
    readfile($file);
    return true;
}
$theme = getenv('WPLAB_THEME');
if ($theme) {
    $pick = function () use ($theme) { return $theme; };
    foreach (['pre_option_stylesheet', 'pre_option_template'] as $hook) {
        $GLOBALS['wp_filter'][$hook][10][] = ['function' => $pick, 'accepted_args' => 1];
    }
}
if ($file !== false && is_dir($file)) {
    $file = rtrim($file, '/') . '/index.php';
}
if ($file === false || !is_file($file) || !str_ends_with($file, '.php')) {
    $file = $root . '/index.php';
}
$_SERVER['SCRIPT_NAME'] = substr($file, strlen($root));
$_SERVER['SCRIPT_FILENAME'] = $file;
$_SERVER['PHP_SELF'] = $_SERVER['SCRIPT_NAME'];
chdir(dirname($file));
require $file;
