<?php
/* Seed the lab WordPress with realistic content. Idempotent: everything is looked up first.
 * Run with php-cli and the same WPLAB_* environment as the servers. */
$_SERVER['WORDPRESS_CONFIG'] = 'wplab';
$_SERVER['HTTP_HOST'] = parse_url(getenv('WPLAB_URL'), PHP_URL_HOST);
define('WP_USE_THEMES', false);
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/user.php';
require_once ABSPATH . 'wp-admin/includes/taxonomy.php';

function lab_category($name) {
    $term = get_term_by('name', $name, 'category');
    return $term ? (int) $term->term_id : (int) wp_insert_category(['cat_name' => $name]);
}

function lab_post($title, $content, $categories, $type = 'post', $author = 1) {
    $existing = get_page_by_title($title, OBJECT, $type);
    if ($existing) {
        return (int) $existing->ID;
    }
    return (int) wp_insert_post([
        'post_title' => $title, 'post_content' => $content, 'post_status' => 'publish',
        'post_type' => $type, 'post_author' => $author, 'post_category' => $categories,
    ]);
}

$editor = get_user_by('login', 'editor');
$editor_id = $editor ? $editor->ID : wp_insert_user([
    'user_login' => 'editor', 'user_pass' => 'editor-pass', 'user_email' => 'editor@lab.test',
    'display_name' => 'Erin Editor', 'role' => 'editor',
]);

$news = lab_category('News');
$recipes = lab_category('Recipes');
$travel = lab_category('Travel');
lab_category('Archive');

$posts = [
    ['City council approves new bike lanes', "<!-- wp:paragraph --><p>The council voted 7-2 to add twelve kilometres of protected bike lanes downtown.</p><!-- /wp:paragraph -->", [$news], 1],
    ['Lemon risotto in thirty minutes', "<!-- wp:paragraph --><p>Toast the rice, add warm stock a ladle at a time, finish with lemon zest and parmesan.</p><!-- /wp:paragraph -->", [$recipes], $editor_id],
    ['A weekend in the mountains', "<!-- wp:paragraph --><p>Three trails, two huts and one very cold lake: our itinerary for a long weekend.</p><!-- /wp:paragraph -->", [$travel], $editor_id],
    ['Library extends opening hours', "<!-- wp:paragraph --><p>From next month the central library stays open until 10 pm on weekdays.</p><!-- /wp:paragraph -->", [$news], 1],
    ['Sourdough starter basics', "<!-- wp:paragraph --><p>Flour, water and patience: feeding schedules and what the bubbles tell you.</p><!-- /wp:paragraph -->", [$recipes], 1],
];
$ids = [];
foreach ($posts as [$title, $content, $cats, $author]) {
    $ids[$title] = lab_post($title, $content, $cats, 'post', $author);
}
lab_post('About us', '<!-- wp:paragraph --><p>A small newsroom writing about our city.</p><!-- /wp:paragraph -->', [], 'page');
lab_post('Contact', '<!-- wp:paragraph --><p>Write to newsroom@lab.test.</p><!-- /wp:paragraph -->', [], 'page');

$first = $ids['City council approves new bike lanes'];
if (!get_comments(['post_id' => $first, 'count' => true])) {
    wp_insert_comment(['comment_post_ID' => $first, 'comment_author' => 'Riley Reader',
        'comment_author_email' => 'riley@lab.test', 'comment_content' => 'Finally! My commute just got safer.',
        'comment_approved' => 1]);
    wp_insert_comment(['comment_post_ID' => $first, 'comment_author' => 'Sam Skeptic',
        'comment_author_email' => 'sam@lab.test', 'comment_content' => 'What about parking on Main Street?',
        'comment_approved' => 0]);
}
update_option('blogdescription', 'News, recipes and travel from the lab');
update_option('comment_moderation', 1);
echo "seeded\n";
