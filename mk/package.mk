# SPDX-License-Identifier: GPL-2.0
#
# Packaging targets (included by the top-level Makefile):
#   make dkms-install [KVERS="rel ..."] [LOAD_AT_BOOT=1]
#                         copy the sources to /usr/src/user-events-<VERSION>,
#                         dkms add/build/install for every kernel with headers
#   make dkms-remove      undo dkms-install
#   make deb              build/user-events-dkms_<VERSION>_all.deb + lintian
#   make check-package    build the .deb, install it, check the DKMS-built
#                         modules (modinfo, guest smoke test), purge it
#   make check-versions   VERSION, dkms.conf, debian/changelog agree
#   make set-version NEW_VERSION=x.y.z [CHANGES="text"]
#                         change the version everywhere (new changelog entry)
#   make docs             check Documentation/*.rst with docutils, HTML in
#                         build/docs/
#   make package-setup    install dkms, debhelper, dh-dkms, lintian, docutils

.PHONY: dkms-install dkms-remove deb check-package check-versions set-version \
	docs package-setup

dkms-install:
	scripts/dkms-install.sh

dkms-remove:
	scripts/dkms-install.sh --remove

deb:
	scripts/build-deb.sh

check-package:
	scripts/package-test.sh

check-versions:
	scripts/check-versions.sh

set-version:
	scripts/set-version.sh "$(NEW_VERSION)" "$(CHANGES)"

docs:
	scripts/build-docs.sh

package-setup:
	scripts/package-setup.sh
