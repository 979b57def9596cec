; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @bitcasts(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, ptr addrspace(1) %p3, ptr addrspace(1) %p4, ptr addrspace(1) %p5, ptr addrspace(1) %p6, ptr addrspace(1) %p7) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca double, addrspace(5)
  store double 0.0, ptr addrspace(5) %r1
  %r2 = alloca half, addrspace(5)
  store half 0.0, ptr addrspace(5) %r2
  %r3 = alloca i16, addrspace(5)
  store i16 0, ptr addrspace(5) %r3
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %r5 = alloca i64, addrspace(5)
  store i64 0, ptr addrspace(5) %r5
  %r6 = alloca i16, addrspace(5)
  store i16 0, ptr addrspace(5) %r6
  %r7 = alloca i16, addrspace(5)
  store i16 0, ptr addrspace(5) %r7
  %v0 = sext i32 %tid to i64
  %v1 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v0
  %v2 = load float, ptr addrspace(1) %v1, align 4
  store float %v2, ptr addrspace(5) %r0
  %v3 = sext i32 %tid to i64
  %v4 = getelementptr inbounds double, ptr addrspace(1) %p1, i64 %v3
  %v5 = load double, ptr addrspace(1) %v4, align 8
  store double %v5, ptr addrspace(5) %r1
  %v6 = sext i32 %tid to i64
  %v7 = getelementptr inbounds half, ptr addrspace(1) %p2, i64 %v6
  %v8 = load half, ptr addrspace(1) %v7, align 2
  store half %v8, ptr addrspace(5) %r2
  %v9 = sext i32 %tid to i64
  %v10 = getelementptr inbounds i16, ptr addrspace(1) %p3, i64 %v9
  %v11 = load i16, ptr addrspace(1) %v10, align 2
  store i16 %v11, ptr addrspace(5) %r3
  %v12 = load float, ptr addrspace(5) %r0
  %v13 = bitcast float %v12 to i32
  %v14 = xor i32 %v13, -2147483648
  store i32 %v14, ptr addrspace(5) %r4
  %v15 = load i32, ptr addrspace(5) %r4
  %v16 = bitcast i32 %v15 to float
  store float %v16, ptr addrspace(5) %r0
  %v17 = load double, ptr addrspace(5) %r1
  %v18 = bitcast double %v17 to i64
  store i64 %v18, ptr addrspace(5) %r5
  %v19 = load i64, ptr addrspace(5) %r5
  %v20 = sext i32 1 to i64
  %v21 = add i64 %v19, %v20
  %v22 = bitcast i64 %v21 to double
  store double %v22, ptr addrspace(5) %r1
  %v23 = load half, ptr addrspace(5) %r2
  %v24 = bitcast half %v23 to i16
  store i16 %v24, ptr addrspace(5) %r6
  %v25 = load i16, ptr addrspace(5) %r3
  store i16 %v25, ptr addrspace(5) %r7
  %v26 = load i16, ptr addrspace(5) %r7
  %v27 = bitcast i16 %v26 to half
  store half %v27, ptr addrspace(5) %r2
  %v28 = load i16, ptr addrspace(5) %r6
  store i16 %v28, ptr addrspace(5) %r3
  %v29 = load i32, ptr addrspace(5) %r4
  %v30 = bitcast float 0x3FF0000000000000 to i32
  %v31 = add i32 %v29, %v30
  store i32 %v31, ptr addrspace(5) %r4
  %v32 = load float, ptr addrspace(5) %r0
  %v33 = sext i32 %tid to i64
  %v34 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v33
  store float %v32, ptr addrspace(1) %v34, align 4
  %v35 = load double, ptr addrspace(5) %r1
  %v36 = sext i32 %tid to i64
  %v37 = getelementptr inbounds double, ptr addrspace(1) %p1, i64 %v36
  store double %v35, ptr addrspace(1) %v37, align 8
  %v38 = load half, ptr addrspace(5) %r2
  %v39 = sext i32 %tid to i64
  %v40 = getelementptr inbounds half, ptr addrspace(1) %p2, i64 %v39
  store half %v38, ptr addrspace(1) %v40, align 2
  %v41 = load i16, ptr addrspace(5) %r3
  %v42 = sext i32 %tid to i64
  %v43 = getelementptr inbounds i16, ptr addrspace(1) %p3, i64 %v42
  store i16 %v41, ptr addrspace(1) %v43, align 2
  %v44 = load i32, ptr addrspace(5) %r4
  %v45 = sext i32 %tid to i64
  %v46 = getelementptr inbounds i32, ptr addrspace(1) %p4, i64 %v45
  store i32 %v44, ptr addrspace(1) %v46, align 4
  %v47 = load i64, ptr addrspace(5) %r5
  %v48 = sext i32 %tid to i64
  %v49 = getelementptr inbounds i64, ptr addrspace(1) %p5, i64 %v48
  store i64 %v47, ptr addrspace(1) %v49, align 8
  %v50 = load i16, ptr addrspace(5) %r6
  %v51 = sext i32 %tid to i64
  %v52 = getelementptr inbounds i16, ptr addrspace(1) %p6, i64 %v51
  store i16 %v50, ptr addrspace(1) %v52, align 2
  %v53 = load i16, ptr addrspace(5) %r7
  %v54 = sext i32 %tid to i64
  %v55 = getelementptr inbounds i16, ptr addrspace(1) %p7, i64 %v54
  store i16 %v53, ptr addrspace(1) %v55, align 2
  ret void
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
