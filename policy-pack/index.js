// Forewarn's Pulumi policy pack (docs/deploy.md): the compiled pack of services/policy-pack/.
// `pulumi preview --policy-pack <this folder>`; @pulumi/policy and @pulumi/pulumi resolve from the
// package's own node_modules, or the program's beside it.
'use strict';
require('../dist/services/policy-pack/pack');
