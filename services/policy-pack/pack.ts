import { PolicyPack } from '@pulumi/policy';
import { createObjectCheck } from './object-check';
import { verdictPolicies } from './verdict-policies';

// The entry of Forewarn's Pulumi policy pack (policy-pack/ in the package; docs/deploy.md):
// `pulumi preview --policy-pack node_modules/forewarn/policy-pack`. Loading this module starts the
// pack's server, so nothing else imports it.

new PolicyPack('forewarn', { policies: verdictPolicies(createObjectCheck(process.env)) });
