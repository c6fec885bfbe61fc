<?php
/* Seed the lab wiki (a maintenance script: run with php-cli, MW_CONFIG_FILE and MW_INSTALL_PATH
 * set as mediawiki.sh does). Idempotent: a page is only saved when its text differs, and
 * "Lab Notes" only when it is missing, so users' edits survive a repeated `up`. */
require_once (getenv('MW_INSTALL_PATH') ?: '/usr/share/mediawiki') . '/maintenance/Maintenance.php';

use MediaWiki\MediaWikiServices;

class LabSeed extends Maintenance {
    private const PAGES = [
        'Main Page' => <<<'WIKI'
'''Welcome to the Lab Wiki.''' It is a small wiki for trying web agents.

== Articles ==
* [[Lab Table]]: cities in a sortable table, and a block that collapses
* [[Lab Notes]]: notes that anyone who logs in can edit

== Getting started ==
[[Special:UserLogin|Log in]], then edit [[Lab Notes]] and save your changes.
WIKI,
        'Lab Table' => <<<'WIKI'
This article lists a few cities. Click a column header to sort the table by that column.
__FORCETOC__
== Cities ==
{| class="wikitable sortable"
|+ Cities of the lab
! City !! Country !! Population
|-
| Oslo || Norway || 709,037
|-
| Reykjavik || Iceland || 139,875
|-
| Lisbon || Portugal || 545,923
|-
| Berlin || Germany || 3,755,251
|-
| Valletta || Malta || 5,157
|}

== Details ==
<div class="mw-collapsible">
The populations are rounded figures from recent censuses. This block can be collapsed.
</div>

=== Method ===
Figures count the city proper, not the metropolitan area.

== See also ==
* [[Lab Notes]]
* [[Main Page]]
WIKI,
    ];

    private const NOTES = <<<'WIKI'
These are the lab's notes. Log in, edit this page and save to add yours.

== Notes ==
* The Lab Table sorts by any column.
WIKI;

    public function __construct() {
        parent::__construct();
        $this->addDescription('Seed the lab wiki with its pages.');
    }

    public function execute() {
        $services = MediaWikiServices::getInstance();
        $admin = $services->getUserFactory()->newFromName('admin');
        if (!$admin || !$admin->isRegistered()) {
            $this->fatalError('the admin user is missing');
        }
        // The linked pages first, so the Main Page renders its links blue, not as red "create" links.
        $this->save($services, $admin, 'Lab Notes', self::NOTES, false);
        $this->save($services, $admin, 'Lab Table', self::PAGES['Lab Table'], true);
        $this->save($services, $admin, 'Main Page', self::PAGES['Main Page'], true);
        // Page views do not run jobs (see LabSettings.php): run the links updates now.
        $services->getJobRunner()->run(['type' => false, 'maxJobs' => 100, 'maxTime' => 30]);
        $this->output("seeded\n");
    }

    private function save($services, $admin, string $name, string $text, bool $overwrite): void {
        $title = Title::newFromText($name);
        $page = $services->getWikiPageFactory()->newFromTitle($title);
        if ($page->exists()) {
            $current = $page->getContent();
            if (!$overwrite || ($current && $current->serialize() === $text)) {
                return;
            }
        }
        $content = ContentHandler::makeContent($text, $title);
        $status = $page->doUserEditContent($content, $admin, 'Lab seed');
        if (!$status->isOK()) {
            $this->fatalError("$name: " . $status->getWikiText(false, false, 'en'));
        }
        $this->output("saved $name\n");
    }
}

$maintClass = LabSeed::class;
require_once RUN_MAINTENANCE_IF_MAIN;
