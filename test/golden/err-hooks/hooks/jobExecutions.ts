export default { beforeCreate() {} };
