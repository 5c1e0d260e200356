// The jest environment of every suite: jest's own Node.js environment, whose test context is, on
// Node.js 22.8 and later, a plain context (`vm.constants.DONT_CONTEXTIFY`) rather than one whose
// global object is a proxy jest watches. In the proxied context every read of a global (`Array`,
// `Math`, `Object`) crosses the context's interceptors, which V8 cannot optimize: the SDK's
// serializers and the embedded DynamoDB read globals on every value they touch, and a suite spent
// about a quarter of its time there. What jest loses is the clean-up of globals a suite leaves
// behind, which matters to a context that is kept: each test file gets a new one.
'use strict';
const vm = require('node:vm');
const { TestEnvironment } = require('jest-environment-node');

class PlainContextEnvironment extends TestEnvironment {
  constructor(config, context) {
    const plain = vm.constants?.DONT_CONTEXTIFY;
    const createContext = vm.createContext;
    // jest's constructor creates the context from its proxy; the plain one is created instead.
    if (plain) vm.createContext = () => createContext(plain);
    try {
      super(config, context);
    } finally {
      vm.createContext = createContext;
    }
  }
}

module.exports = PlainContextEnvironment;
